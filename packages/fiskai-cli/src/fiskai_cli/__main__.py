from fiskai_cli._entry import main

main()
