"""Stage 4, verdict -> report: records with their provenance
(record.py), statistics (stats.py, samples.py), the tables of each
record kind (*_tables.py, columns.py), `bringup render` and `status`,
JUnit output and the check that quoted figures come from clean
records (quotes.py). Nothing here builds or boots."""
