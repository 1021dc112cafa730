CREATE VIEW captures AS
  SELECT record, file, rank, step, device, frame.filename AS site_file, frame.line AS line, frame.name AS site_function,
         category, bytes, blocks
  FROM read_json_auto('captures.jsonl');
