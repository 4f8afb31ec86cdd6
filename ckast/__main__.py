from ckast.cli import main

main()
