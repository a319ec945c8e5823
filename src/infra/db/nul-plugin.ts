import {
  OperationNodeTransformer,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type PrimitiveValueListNode,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  type ValueNode,
} from 'kysely';

const NUL = '\u0000';
export const replaceNul = (value: unknown): unknown =>
  typeof value === 'string' && value.includes(NUL) ? value.replaceAll(NUL, '\uFFFD') : value;

class NulTransformer extends OperationNodeTransformer {
  protected override transformValue(node: ValueNode): ValueNode {
    const value = replaceNul(node.value);
    return value === node.value ? super.transformValue(node) : { ...node, value };
  }

  protected override transformPrimitiveValueList(node: PrimitiveValueListNode): PrimitiveValueListNode {
    return { ...node, values: node.values.map(replaceNul) };
  }
}

/**
 * PostgreSQL text cannot hold U+0000 and answers such a parameter with an error (a 500).
 * Input may carry it (a `%00` in a query, a `\u0000` in a JSON payload), so on PostgreSQL it
 * becomes U+FFFD: a lookup then simply finds nothing, and stored payloads keep everything else.
 */
export class ReplaceNulPlugin implements KyselyPlugin {
  private readonly transformer = new NulTransformer();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node);
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}
