package io.gma.client;

/** {@link TableQueriesContract} in one domain: producers and consumer over direct TCP links. */
class TableQueriesTest extends TableQueriesContract {
    @Override
    protected Fixture newFixture() throws Exception {
        return new DirectFixture();
    }
}
