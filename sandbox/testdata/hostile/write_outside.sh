# Writes into a directory outside the workspace; $1 is that directory.
echo pwned > "$1/pwned.txt" && echo wrote
