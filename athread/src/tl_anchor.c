/* Linked into every program by ldmsim_add_athread_program: hands the bounds of the ldmsim_tl section (the
 * slave files' __thread_local globals) to the athread runtime before main. */
extern char __start_ldmsim_tl[] __attribute__((weak));
extern char __stop_ldmsim_tl[] __attribute__((weak));
void __ldmsim_athread_register_tl(char* begin, char* end);

__attribute__((constructor)) static void ldmsim_athread_anchor(void) {
  __ldmsim_athread_register_tl(__start_ldmsim_tl, __stop_ldmsim_tl);
}
