# Reads a file outside the workspace; $1 is its absolute path.
cat "$1"
