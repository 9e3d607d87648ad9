"""The host the lab runs on: Debian packages it installs (packages.py,
apt_sources.py) and the host CPU it describes in every record (hostcpu.py)."""
