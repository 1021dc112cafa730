SELECT rank, site_file, line, site_function, max(bytes) - min(bytes) AS growth_bytes
FROM captures
WHERE record = 'site'
GROUP BY rank, site_file, line, site_function
ORDER BY growth_bytes DESC, rank
LIMIT 1;
