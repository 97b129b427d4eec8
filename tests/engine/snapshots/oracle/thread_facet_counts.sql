-- snapshot: thread_facet_counts
-- statements: 2

-- [1] execute
SELECT t.agent_id AS facet_value, count(*) AS n FROM "OAM_THREADS" t WHERE (LOWER(t.id) LIKE :text_pattern ESCAPE '\' OR LOWER(JSON_SERIALIZE(t.metadata RETURNING CLOB)) LIKE :text_pattern ESCAPE '\') AND t.user_id = :scope_user_id GROUP BY t.agent_id
-- binds: {"text_pattern": "%lisbon%", "scope_user_id": "u1"}
-- options: fetch_lobs=False

-- [2] execute
SELECT tag.item AS facet_value, count(*) AS n FROM "OAM_THREADS" t, JSON_TABLE(t.metadata, '$.tags[*]' COLUMNS (item VARCHAR2(4000) PATH '$' NULL ON ERROR)) tag WHERE JSON_EQUAL(JSON_QUERY(t.metadata, '$."topic"' RETURNING JSON), JSON(:mf0)) AND tag.item IS NOT NULL GROUP BY tag.item
-- binds: {"mf0": "\"trips\""}
-- options: fetch_lobs=False
