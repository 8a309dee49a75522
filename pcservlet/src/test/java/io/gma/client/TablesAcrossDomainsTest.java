package io.gma.client;

/**
 * {@link TableQueriesContract} across domains: the producers in east, the consumer in west, each behind its PC
 * servlet, joined by the HTTP tunnel. Rows, queries and their answers travel as application commands.
 */
class TablesAcrossDomainsTest extends TableQueriesContract {
    @Override
    protected Fixture newFixture() throws Exception {
        return new TunnelFixture(TunnelFixture.Firewalls.NONE);
    }
}
