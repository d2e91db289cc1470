"""Files and places: shared files, memsift's home, trust, the project and its scope."""
