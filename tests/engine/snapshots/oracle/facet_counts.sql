-- snapshot: facet_counts
-- statements: 3

-- [1] execute
SELECT r.user_id AS facet_value, count(*) AS n FROM "OAM_RECORDS" r WHERE r.record_type IN (:type0, :type1) AND r.agent_id = :scope_agent_id AND (r.expires_at IS NULL OR r.expires_at > :now) AND (LOWER(r.content) LIKE :text_pattern ESCAPE '\' OR LOWER(r.id) LIKE :text_pattern ESCAPE '\' OR LOWER(JSON_SERIALIZE(r.metadata RETURNING CLOB)) LIKE :text_pattern ESCAPE '\') GROUP BY r.user_id
-- binds: {"type0": "fact", "type1": "preference", "scope_agent_id": "a1", "now": "<timestamp>", "text_pattern": "%lisbon%"}
-- options: fetch_lobs=False

-- [2] execute
SELECT CASE WHEN (r.status <> 'valid' OR r.lifecycle_links <> 0) THEN 'invalid' ELSE 'valid' END AS facet_value, count(*) AS n FROM "OAM_RECORDS" r WHERE r.record_type IN (:type0) AND r.user_id = :scope_user_id AND JSON_EQUAL(JSON_QUERY(r.metadata, '$."source"' RETURNING JSON), JSON(:mf0)) AND (r.expires_at IS NULL OR r.expires_at > :now) GROUP BY CASE WHEN (r.status <> 'valid' OR r.lifecycle_links <> 0) THEN 'invalid' ELSE 'valid' END
-- binds: {"type0": "fact", "scope_user_id": "u1", "mf0": "\"chat\"", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [3] execute
SELECT tag.item AS facet_value, count(*) AS n FROM "OAM_RECORDS" r, JSON_TABLE(r.metadata, '$.tags[*]' COLUMNS (item VARCHAR2(4000) PATH '$' NULL ON ERROR)) tag WHERE r.record_type IN (:type0) AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.status = 'valid' AND r.lifecycle_links = 0 AND tag.item IS NOT NULL GROUP BY tag.item
-- binds: {"type0": "fact", "now": "<timestamp>"}
-- options: fetch_lobs=False
