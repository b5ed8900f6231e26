"""The runtime: builds a profile's plugins and runs a scheduling and binding cycle."""
