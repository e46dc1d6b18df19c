from . import write_all

print("\n".join(write_all()))
