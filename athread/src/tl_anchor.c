/* Linked into every program by ldmsim_add_athread_program: hands the bounds of the ldmsim_tl section (the
 * slave files' __thread_local globals) to the athread runtime before main. */
extern char __start_ldmsim_tl[] __attribute__((weak));
extern char __stop_ldmsim_tl[] __attribute__((weak));
void __ldmsim_athread_register_tl(char* begin, char* end);

__attribute__((constructor)) static void ldmsim_athread_anchor(void) {
  __ldmsim_athread_register_tl(__start_ldmsim_tl, __stop_ldmsim_tl);
}

/* One host thread per core group: the program's host files are linked with --wrap=pthread_create, so every
 * thread they create gets the next host thread index (in creation order, counted in the creating thread), and the
 * athread calls it makes act for the core group of that index (docs/athread.md). */
#include <pthread.h>
#include <stdlib.h>

int __real_pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg);
void __ldmsim_athread_bind_thread(int index);
int __ldmsim_athread_next_thread(void);

struct ldmsim_thread_start {
  void* (*start)(void*);
  void* arg;
  int index;
};

static void* ldmsim_thread_trampoline(void* p) {
  struct ldmsim_thread_start go = *(struct ldmsim_thread_start*)p;
  free(p);
  __ldmsim_athread_bind_thread(go.index);
  return go.start(go.arg);
}

int __wrap_pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  struct ldmsim_thread_start* go = (struct ldmsim_thread_start*)malloc(sizeof *go);
  if (go == NULL) return 11; /* EAGAIN */
  go->start = start;
  go->arg = arg;
  go->index = __ldmsim_athread_next_thread();
  int rc = __real_pthread_create(thread, attr, ldmsim_thread_trampoline, go);
  if (rc != 0) free(go);
  return rc;
}
