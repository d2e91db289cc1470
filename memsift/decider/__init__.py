"""The embedded decision model: memsift's questions answered offline, in-process."""
