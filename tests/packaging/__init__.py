"""The release as a technician installs it: the wheel, its lock file, the supported Pythons."""
