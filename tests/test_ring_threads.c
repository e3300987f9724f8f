// Thread stress: 3 producer and 2 consumer threads in one process share one mapping, so the
// protocol's memory ordering is visible to ThreadSanitizer (make test-san).
#include "ring_stress.h"

int main(int argc, char **argv)
{
	StressConfig c;
	stress_config_default(&c);
	c.threads = 1;
	c.positions = 50000;
	return stress_main(argc, argv, &c);
}
