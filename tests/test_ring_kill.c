// Kill test: 3 producer processes are SIGKILLed at random moments (half of the time aimed
// between claim and publish) and restarted, at least 50 kills; 2 consumers check that nothing
// is lost or duplicated and that no position waits longer than the adoption bound.
#include "ring_stress.h"

int main(int argc, char **argv)
{
	StressConfig c;
	stress_config_default(&c);
	c.producers = 3;
	c.consumers = 2;
	c.kill = 1;
	c.min_kills = 50;
	c.positions = 40000;
	c.adopt_timeout_ms = 50;
	// detection within one adopt period, noticed within half a period more, redone in < 1 ms;
	// the rest is slack for a loaded 2-core machine
	c.max_wait_ms = 2 * c.adopt_timeout_ms + 900;
	c.slow_us = 50; // keep the run long enough for the kills (a few seconds)
	return stress_main(argc, argv, &c);
}
