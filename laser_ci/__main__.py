from laser_ci.cli import main

main()
