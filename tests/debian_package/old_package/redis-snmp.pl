#! /usr/bin/perl
# Test stand-in for the Perl agent of the package redis-snmp 0.1-1
# (masterzen/redis-snmp), for tests/debian_package.rs. What it shares with
# the real one, and what the upgrade meets:
# - the same options (-h -P -p -o -r --daemon-pid -n -v), so that the same
#   /etc/default/redis-snmp starts it, with a password in its argv;
# - started by the same init script, it detaches and writes its PID to
#   --daemon-pid (default /var/run/redis-snmp.pid), runs as root, and
#   leaves that file behind when it ends;
# - it is a subagent of snmpd the same way: NetSNMP::agent (libsnmp-perl)
#   as the net-snmp application "redis", which reads its settings (such as
#   agentXSocket) from redis.conf in net-snmp's configuration path, and
#   registers the OID of -o, by default .1.3.6.1.4.1.20267.400.1.
# It does not poll Redis: it answers redisConnectedClients (OID.1.0) with
# the marker Gauge32 424242, so that a test sees whose answer snmpd gives.
# The first line is replaced by the test: "#! /usr/bin/perl" as debhelper
# >= 13.10 writes it (the process is then named redis-snmp), or
# "#!/usr/bin/env perl" as in 2011 (named perl).
use strict;
use warnings;
use Getopt::Long qw(:config no_ignore_case);
use POSIX qw(setsid);
use NetSNMP::OID;
use NetSNMP::agent (':all');
use NetSNMP::ASN (':all');

my %opt = (
    daemon_pid => '/var/run/redis-snmp.pid',
    oid        => '1.3.6.1.4.1.20267.400.1',
);
GetOptions(
    \%opt, 'host|h=s', 'port|P=i', 'password|p=s', 'oid|o=s', 'refresh|r=i',
    'daemon_pid|daemon-pid=s', 'no-daemon|n', 'verbose|v+',
) or exit 2;

if (!$opt{'no-daemon'}) {
    open STDIN, '<', '/dev/null' or die "redis-snmp: /dev/null: $!";
    open STDOUT, '>', '/dev/null' or die "redis-snmp: /dev/null: $!";
    defined(my $pid = fork) or die "redis-snmp: fork: $!";
    if ($pid) {
        open my $file, '>', $opt{daemon_pid} or die "redis-snmp: $opt{daemon_pid}: $!";
        print {$file} "$pid\n";
        close $file or die "redis-snmp: $opt{daemon_pid}: $!";
        exit 0;
    }
    setsid() or die "redis-snmp: setsid: $!";
    open STDERR, '>&', \*STDOUT or die "redis-snmp: stderr: $!";
}

my $agent = NetSNMP::agent->new('Name' => 'redis', 'AgentX' => 1);
my $marker = NetSNMP::OID->new("$opt{oid}.1.0");
my $handler = sub {
    my ($handler, $registration, $info, $requests) = @_;
    for (my $request = $requests; $request; $request = $request->next()) {
        my $oid = $request->getOID();
        my $mode = $info->getMode();
        if ($mode == MODE_GET && NetSNMP::OID::compare($oid, $marker) == 0) {
            $request->setValue(ASN_GAUGE, 424242);
        } elsif ($mode == MODE_GETNEXT && NetSNMP::OID::compare($oid, $marker) < 0) {
            $request->setOID($marker);
            $request->setValue(ASN_GAUGE, 424242);
        }
    }
};
$agent->register('redis', NetSNMP::OID->new($opt{oid}), $handler)
    or die "redis-snmp: could not register $opt{oid}";

my $running = 1;
$SIG{$_} = sub { $running = 0 } for qw(INT QUIT TERM);
$agent->agent_check_and_process(1) while $running;
$agent->shutdown();
