CREATE TABLE lines(j TEXT);
.mode ascii
.separator "\037" "\n"
.import captures.jsonl lines
.mode list
.separator "\t"
CREATE VIEW captures AS
  SELECT json_extract(j, '$.record') AS record, json_extract(j, '$.file') AS file, json_extract(j, '$.rank') AS rank,
         json_extract(j, '$.step') AS step, json_extract(j, '$.device') AS device,
         json_extract(j, '$.frame.filename') AS site_file, json_extract(j, '$.frame.line') AS line,
         json_extract(j, '$.frame.name') AS site_function, json_extract(j, '$.category') AS category,
         json_extract(j, '$.bytes') AS bytes, json_extract(j, '$.blocks') AS blocks
  FROM lines;
