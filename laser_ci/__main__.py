from laser_ci.cli import main

if __name__ == "__main__":  # not when a spawned process imports it (laser-ci eval --folds)
    main()
