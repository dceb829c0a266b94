from aurane.cli.main import entry

entry()
