// Linux interfaces Glibc's Swift module does not carry: epoll (the notification sockets).
#include <sys/epoll.h>
