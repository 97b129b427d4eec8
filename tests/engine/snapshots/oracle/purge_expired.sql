-- snapshot: purge_expired
-- statements: 4

-- [1] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.expires_at IS NOT NULL AND r.expires_at <= :now
-- binds: {"now": "<timestamp>"}
-- options: fetch_lobs=False

-- [2] execute
SELECT DISTINCT rel.target_id FROM "OAM_RELATIONS" rel WHERE rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND rel.relation_type IN ('supersedes', 'refines', 'duplicates')
-- binds: {"ids": "[\"old\"]"}
-- options: fetch_lobs=False

-- [3] execute
DELETE FROM "OAM_RELATIONS" WHERE source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR target_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"old\"]"}

-- [4] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[8]"}
