"""Reports: the JSON report, its analysis, and the HTML rendering."""
