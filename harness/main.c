extern int mb_placeholder; int main(void) { return 0; }
