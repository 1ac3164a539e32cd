"""A protocol proxy over `capconf driver` with one of the third round's wrong runtimes
(issue 20, part 4) or one correct-but-different variant (its pins and false alarms).
The proxy machinery is round 1's (`tests/fake_impls/eyes/proxy_base.py`); only the
bugs and variants are this round's (`bugs.py`, `variants.py`). See
tests/test_eyes3_proxy.py."""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "eyes"))

import bugs  # noqa: E402
import variants  # noqa: E402
from proxy_base import Proxy, identity  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--bug", default="none")
parser.add_argument("--log")
options = parser.parse_args()
table = {"none": identity, **bugs.BUGS, **variants.VARIANTS}
Proxy(table[options.bug], options.log).run()
