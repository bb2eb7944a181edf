"""The second decision core (choosing, evidence, verdicts as of issue 35), frozen so the gym can run
it beside today's."""
