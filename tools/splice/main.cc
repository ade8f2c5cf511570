// The splice command line: inspect | run (more to come).
int main() { return 0; }
