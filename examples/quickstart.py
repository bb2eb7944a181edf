import random

from lamar import Experience, Lamar, Scope, Signal

lam = Lamar(":memory:", k=2, seed=7, holdout=0.2)  # or a file: "lessons.db", "lessons.json"
# holdout, the evidence coin: 0.04 by default (priced for months of use), 0.2 for a short demo
for action in ("clear DerivedData before rebuilding", "delete the lockfile", "rebuild twice"):
    lam.add(Experience(precondition="the Xcode build fails after a dependency bump",
                       action=action, rationale="stale module maps survive a clean build",
                       scope=Scope(project="trace", language="swift")))
helpful = lam.experiences()[0].id                     # in this toy world only the first one works

world = random.Random(0)
for _ in range(1500):
    rec = lam.recall({"project": "trace", "language": "swift", "task": "build_fails"})
    prompt = rec.as_prompt()                          # append this to your system prompt
    worked = world.random() < (0.65 if helpful in rec.ids else 0.35)
    lam.report(rec.episode_id, Signal.SHIPPED if worked else Signal.REVERTED)

for exp in lam.experiences():
    ev = lam.evidence(exp.id)
    lift = f"{ev.lift:+.2f}" if ev.measured else "n/a"  # n/a: its interval still spans all of [-2, 2]
    print(f"{ev.verdict.value:>7}  lift {lift:>5} [{ev.lower:+.2f}, {ev.upper:+.2f}]  "
          f"randomized {ev.randomized:>4}  {exp.action}")
print(rec.as_prompt() or "(nothing injected this time: the lesson was held out)")
