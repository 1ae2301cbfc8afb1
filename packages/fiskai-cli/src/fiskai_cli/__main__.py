from fiskai_cli._root import main

main()
