"""The command-line interface: parses arguments, calls the library, renders what it returns."""
