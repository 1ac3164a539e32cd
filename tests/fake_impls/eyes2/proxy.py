import argparse, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# the proxy machinery is round 1's (tests/fake_impls/eyes/proxy_base.py); only the bugs
# and variants are this tester's own
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "eyes"))
from proxy_base import Proxy, identity
import mybugs
ap = argparse.ArgumentParser()
ap.add_argument("--bug", default="none")
ap.add_argument("--log")
a = ap.parse_args()
table = {"none": identity}
table.update(mybugs.BUGS)
import variants
table.update(variants.VARIANTS)
Proxy(table[a.bug], a.log).run()
