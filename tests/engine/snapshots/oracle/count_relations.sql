-- snapshot: count_relations
-- statements: 1

-- [1] execute
SELECT count(*) AS n FROM "OAM_RELATIONS" rel JOIN "OAM_RECORDS" s ON s.kind = 'memory' AND s.id = rel.source_id JOIN "OAM_RECORDS" t ON t.kind = 'memory' AND t.id = rel.target_id WHERE rel.relation_type IN (SELECT jt.v FROM JSON_TABLE(:relation_types, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND ((s.user_id = :scope_user_id) OR (t.user_id = :scope_user_id)) AND rel.id IN (SELECT jt.v FROM JSON_TABLE(:relation_ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND JSON_EQUAL(JSON_QUERY(rel.metadata, '$."origin"' RETURNING JSON), JSON(:mf0))
-- binds: {"relation_types": "[\"refines\", \"supersedes\"]", "scope_user_id": "u1", "relation_ids": "[\"rel-1\", \"rel-2\"]", "mf0": "\"llm\""}
-- options: fetch_lobs=False
