#!/usr/bin/perl
# A dominoes bot in Perl over the stdio protocol, with no kit: core Perl and JSON::PP only.
# docs/how-to/bot-without-a-kit.md shows it; tests/protocol/test_stdio.py runs check-bot on it, sandboxed.
# Each line on stdin is {"hello": ...}, {"act": ...} or {"notify": ...}; answer hello and act with one line each,
# notify with nothing, and write nothing else on stdout (debugging goes to stderr, the bot's log).
use strict;
use warnings;
use JSON::PP;

$| = 1;                                        # every answer leaves at once, not when a buffer fills
my $json = JSON::PP->new->canonical;

while (my $line = <STDIN>) {
    my $message = $json->decode($line);
    if (exists $message->{hello}) {
        print $json->encode({name => "perl-heaviest", version => "1.0.0", author => "me", protocolVersion => 1}), "\n";
    } elsif (exists $message->{act}) {
        my $legal = $message->{act}{observation}{legalActions};
        my ($best, $most) = (0, -1);           # a draw or a pass is the only legal action when nothing is placed
        for my $i (0 .. $#$legal) {
            my $action = $legal->[$i];
            next unless $action->{kind} eq "ACTION_KIND_PLACE";
            my $pips = ($action->{tile}{low} // 0) + ($action->{tile}{high} // 0);
            ($best, $most) = ($i, $pips) if $pips > $most;
        }
        print $json->encode({index => $best}), "\n";
    }
}
