// Multi-process stress: 1 producer process(es) x 4 consumer processes, 200,000 positions, every
// payload checked against (seed, g), each rank sees exactly its positions, in order, once.
#include "ring_stress.h"

int main(int argc, char **argv)
{
	StressConfig c;
	stress_config_default(&c);
	c.producers = 1;
	c.consumers = 4;
	return stress_main(argc, argv, &c);
}
