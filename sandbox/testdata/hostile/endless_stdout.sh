# Writes to stdout until killed.
yes pwned
