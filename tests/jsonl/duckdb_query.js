// Runs SQL on DuckDB (the @duckdb/node-api package) and prints each row as tab-separated
// values: node duckdb_query.js QUERY.sql, run from the folder that holds the JSONL file.
const fs = require('fs');
(async () => {
  const { DuckDBInstance } = require('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const statements = fs.readFileSync(process.argv[2], 'utf8').split(';').map(s => s.trim()).filter(s => s.length);
  let rows = [];
  for (const sql of statements) {
    const reader = await connection.runAndReadAll(sql);
    rows = reader.getRows();
  }
  for (const row of rows) console.log(row.map(v => String(v)).join('\t'));
})().catch(e => { console.error(e.message); process.exit(1); });
