import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_LENGTH } from './params.ts';

export const SEARCH_TOOL_NAME = 'search_tools';
export const DISCOVER_METHOD = 'toolgate/discover';

/** The tool injected into tools/list in deferred mode: the discovery door for every MCP client. */
export const SEARCH_TOOL = Object.freeze({
  name: SEARCH_TOOL_NAME,
  title: 'Search tools',
  description:
    'Find more tools by describing what you want to do. Returns the best matching tools with their complete input schemas; call a returned tool directly by its name.',
  inputSchema: {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_QUERY_LENGTH,
        description: 'What you want to do, in a few words',
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_LIMIT,
        default: DEFAULT_LIMIT,
        description: 'How many tools to return at most',
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
});
