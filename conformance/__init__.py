"""capconf conformance suite: checks any implementation through the driver protocol."""

SUITE_VERSION = "0.1.0"
