from memdeck.cli import run

run()
