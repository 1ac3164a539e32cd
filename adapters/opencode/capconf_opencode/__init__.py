"""capconf driver for OpenCode's real binary (`opencode serve`) with a scripted model.

The adapter translates vocabulary only (capconf's names and keys to OpenCode's, by the
fixed table in `vocabulary`); every decision about loading, granting and running is
taken by OpenCode's own code in the binary the package `opencode-ai` installs.
"""
