import argparse, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
