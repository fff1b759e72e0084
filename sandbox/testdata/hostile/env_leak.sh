# Prints the environment it was given.
env
