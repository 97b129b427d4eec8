-- snapshot: in_database_embedder_embed
-- statements: 1

-- [1] execute
SELECT jt.n, VECTOR_EMBEDDING("DOC_MODEL" USING jt.t AS data) AS embedding FROM JSON_TABLE(:texts, '$[*]' COLUMNS (n FOR ORDINALITY, t VARCHAR2(4000) TRUNCATE PATH '$')) jt ORDER BY jt.n
-- binds: {"texts": "[\"first text\", \"second text\"]"}
