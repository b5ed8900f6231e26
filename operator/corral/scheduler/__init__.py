"""The embedded scheduler engine: the Kubernetes Scheduling Framework in Python."""
