"""opverify's Python side: the code the executor process runs, and the lint."""
