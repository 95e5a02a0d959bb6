#! /bin/sh
# Test stand-in for /etc/init.d/redis-snmp of the package redis-snmp 0.1-1
# (masterzen/redis-snmp), which behaves the same: start-stop-daemon starts
# the agent with --daemon-pid and DAEMON_OPTS, and stop is lsb's killproc
# on the PID file and /usr/bin/perl, which, as start-stop-daemon --name,
# finds the agent only where its process is named perl (a script started
# with "#!/usr/bin/env perl"), not redis-snmp ("#! /usr/bin/perl").
### BEGIN INIT INFO
# Provides:          redis-snmp
# Required-Start:    $syslog
# Required-Stop:     $syslog
# Should-Start:      $local_fs $remote_fs $network $named $time
# Should-Stop:       $local_fs $remote_fs $network $named $time
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: Start and stop the redis database server snmp agent
# Description:       Controls the launch/stop of redis SNMP agent.
### END INIT INFO

PATH=/sbin:/bin:/usr/sbin:/usr/bin
DAEMON=/usr/sbin/redis-snmp
INTERPRETER=/usr/bin/perl
NAME=redis-snmp
DESC="Redis-Server SNMP Agent"
PID_FILE=/var/run/redis-snmp.pid

test -x $DAEMON || exit 0

. /lib/lsb/init-functions

if [ -f /etc/default/redis-snmp ]; then
    . /etc/default/redis-snmp
fi

set -e

case "$1" in
    start)
        echo -n "Starting $DESC: "
        if start-stop-daemon --start --quiet --pidfile $PID_FILE --name $NAME \
            --startas $DAEMON -- --daemon-pid $PID_FILE $DAEMON_OPTS >/dev/null; then
            echo "$NAME."
        else
            echo "(already running)."
        fi
        ;;
    stop)
        log_daemon_msg "Stopping $DESC" "$NAME"
        killproc -p $PID_FILE $INTERPRETER
        log_end_msg $?
        ;;
    restart|force-reload)
        $0 stop
        exec $0 start
        ;;
    status)
        pidofproc -p $PID_FILE $INTERPRETER >/dev/null && status=0 || status=$?
        exit $status
        ;;
    *)
        echo "Usage: $0 start|stop|restart|status|force-reload"
        exit 1
        ;;
esac

exit 0
