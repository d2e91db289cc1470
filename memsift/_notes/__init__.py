"""The notes file's plumbing: what a line is, its index, memsift's journal, what sessions were given."""
