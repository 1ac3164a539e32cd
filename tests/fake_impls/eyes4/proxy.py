"""A protocol proxy over `capconf driver` with one of the fourth round's wrong runtimes:
two independent testers, each on one half of the model (`bugs_dimensions.py`: the five
dimensions, definitions, tools, prompt, approval; `bugs_capability.py`: delegation,
workflows, namespaces, connectors, executors, the editor), wrote them from SPEC.md, the
protocol schemas and the golden transcript alone. The proxy machinery is round 1's
(`tests/fake_impls/eyes/proxy_base.py`). See tests/conformance/test_eyes4_proxy.py."""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "eyes"))

import bugs_capability  # noqa: E402
import bugs_dimensions  # noqa: E402
from proxy_base import Proxy, identity  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--bug", default="none")
parser.add_argument("--log")
options = parser.parse_args()
table = {"none": identity, **bugs_dimensions.BUGS, **bugs_capability.BUGS}
Proxy(table[options.bug], options.log).run()
